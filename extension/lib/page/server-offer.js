// "Another Sidemirror server on :47479 — use it?": what the popup and the side panel show when
// the worker found Sidemirror servers that are not the one this extension paired with (status
// `other_server`, lib/worker/connection.js). The worker never switches by itself; the user does,
// here, and the worker accepts only a server it offered.

import { MSG } from "../shared/config.js";
import { send } from "./client.js";
import { h, setText } from "./dom.js";

let uid = 0;

/**
 * Fill `box` with the offers in `status`, or empty and hide it when there are none.
 * Each offer is a sentence and a "Use it" button that asks the worker to switch.
 */
export function renderOffers(box, status) {
  const offers = status?.state === "other_server" ? status.offers || [] : [];
  box.hidden = offers.length === 0;
  if (!offers.length) {
    box.replaceChildren();
    return;
  }
  const error = h("p", { class: "offer-error", attrs: { role: "alert" } });
  const rows = offers.map((offer) => {
    const id = `offer-${++uid}`;
    const sentence = h("span", {
      id,
      class: "offer-text",
      text: `${status.note ? "Another" : "A"} Sidemirror server on :${offer.port} — use it?`,
    });
    const button = h("button", {
      type: "button",
      class: "button small",
      text: "Use it",
      attrs: { "aria-describedby": id },
      on: {
        click: async () => {
          button.disabled = true;
          setText(error, "");
          try {
            await send(MSG.useServer, { port: offer.port, server_id: offer.server_id });
          } catch (err) {
            setText(error, err.message);
            button.disabled = false;
          }
        },
      },
    });
    const version = offer.version ? h("span", { class: "offer-version muted", text: ` (v${offer.version})` }) : null;
    return h("li", { class: "offer", dataset: { port: String(offer.port) } }, sentence, version, " ", button);
  });
  // Never paired and several servers answer: the question. Paired: what became of that server.
  const lead = status.note || (offers.length > 1 ? status.error?.message : null);
  box.replaceChildren(
    lead ? h("p", { class: "offer-lead muted", text: lead }) : null,
    h("ul", { class: "offers" }, rows),
    error,
  );
}
