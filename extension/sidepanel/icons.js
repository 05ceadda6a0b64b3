// Constant icon shapes (16×16, stroked), one per tool kind, drawn with lib/page/dom.js `svgIcon`.

import { svgIcon } from "../lib/page/dom.js";

const SHAPES = {
  // a page with a folded corner and two lines
  read: [
    ["path", { d: "M4 1.75h5.5L12.5 4.75v9.5H4z" }],
    ["path", { d: "M9.5 1.75v3h3" }],
    ["path", { d: "M6 8h4.5M6 10.75h4.5" }],
  ],
  // a pencil
  edit: [
    ["path", { d: "M10.75 2.25l3 3L6 13H3v-3z" }],
    ["path", { d: "M9.25 3.75l3 3" }],
  ],
  // a page with a plus
  write: [
    ["path", { d: "M4 1.75h5.5L12.5 4.75v9.5H4z" }],
    ["path", { d: "M8.25 7.5v4.5M6 9.75h4.5" }],
  ],
  // a terminal prompt
  execute: [
    ["rect", { x: 1.75, y: 2.75, width: 12.5, height: 10.5, rx: 1.5 }],
    ["path", { d: "M4.5 6.25L6.75 8.25 4.5 10.25M8.5 10.5h3" }],
  ],
  // a magnifier
  search: [
    ["circle", { cx: 7, cy: 7, r: 4.25 }],
    ["path", { d: "M10.25 10.25l3.5 3.5" }],
  ],
  // a globe
  fetch: [
    ["circle", { cx: 8, cy: 8, r: 6.25 }],
    ["path", { d: "M1.75 8h12.5M8 1.75c-3 3.5-3 9 0 12.5M8 1.75c3 3.5 3 9 0 12.5" }],
  ],
  // a branching sub-agent
  task: [
    ["circle", { cx: 4, cy: 3.75, r: 1.75 }],
    ["circle", { cx: 4, cy: 12.25, r: 1.75 }],
    ["circle", { cx: 12, cy: 8, r: 1.75 }],
    ["path", { d: "M4 5.5v5M4 8h3.5a2.5 2.5 0 0 0 2.75-.25" }],
  ],
  // a checklist
  plan: [
    ["path", { d: "M2 4l1.25 1.25L5.5 3M2 10l1.25 1.25L5.5 9" }],
    ["path", { d: "M8 4.25h6M8 10.25h6" }],
  ],
  // a question in a bubble
  ask: [
    [
      "path",
      {
        d: "M2 3.25a1.5 1.5 0 0 1 1.5-1.5h9a1.5 1.5 0 0 1 1.5 1.5v6.5a1.5 1.5 0 0 1-1.5 1.5H7L4 14v-2.75h-.5A1.5 1.5 0 0 1 2 9.75z",
      },
    ],
    ["path", { d: "M6.5 5a1.5 1.5 0 1 1 2.25 1.3c-.5.3-.75.6-.75 1.2" }],
    ["path", { d: "M8 9.25v.01" }],
  ],
  // a plug
  mcp: [
    ["path", { d: "M5.5 1.75v3M10.5 1.75v3" }],
    ["path", { d: "M3.5 4.75h9v2.5a4.5 4.5 0 0 1-9 0z" }],
    ["path", { d: "M8 11.75v2.5" }],
  ],
  // a wrench
  other: [
    [
      "path",
      {
        d: "M10.5 1.9a3.5 3.5 0 0 0-3.9 4.7L2 11.2a1.4 1.4 0 0 0 2 2l4.6-4.6a3.5 3.5 0 0 0 4.7-3.9l-2 2-1.9-.4-.4-1.9z",
      },
    ],
  ],
  // used outside tool cards
  check: [["path", { d: "M3 8.5l3 3 7-7" }]],
  cross: [["path", { d: "M4 4l8 8M12 4l-8 8" }]],
  compact: [["path", { d: "M3 3l3.5 3.5M13 3L9.5 6.5M3 13l3.5-3.5M13 13l-3.5-3.5" }]],
  alert: [
    ["path", { d: "M8 1.75L14.5 13.5h-13z" }],
    ["path", { d: "M8 6v3.5M8 11.5v.01" }],
  ],
  copy: [
    ["rect", { x: 5.25, y: 5.25, width: 8.5, height: 8.5, rx: 1.25 }],
    [
      "path",
      { d: "M10.75 5.25V3.5a1.25 1.25 0 0 0-1.25-1.25H3.5A1.25 1.25 0 0 0 2.25 3.5v6A1.25 1.25 0 0 0 3.5 10.75h1.75" },
    ],
  ],
  down: [["path", { d: "M8 3v10M3.5 8.5L8 13l4.5-4.5" }]],
  // a card with a heading and two lines (the session card)
  card: [
    ["rect", { x: 1.75, y: 2.75, width: 12.5, height: 10.5, rx: 1.5 }],
    ["path", { d: "M4.5 6h7M4.5 8.5h7M4.5 11h4" }],
  ],
};

export const KIND_LABELS = {
  read: "Read",
  edit: "Edit",
  write: "Write",
  execute: "Run",
  search: "Search",
  fetch: "Web",
  task: "Sub-agent",
  plan: "Plan",
  ask: "Question",
  mcp: "MCP tool",
  other: "Tool",
};

export function icon(name, opts) {
  return svgIcon(SHAPES[name] || SHAPES.other, opts);
}
