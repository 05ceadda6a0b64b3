// A DOM for extension modules under Node's test runner: linkedom's document and window globals,
// installed before a module that touches the DOM is imported (import this file first).
import { parseHTML } from "linkedom";

const { window, document } = parseHTML("<!doctype html><html><body></body></html>");
for (const [name, value] of Object.entries({ window, document, Node: window.Node, HTMLElement: window.HTMLElement })) {
  globalThis[name] = value;
}
