// Paths of the review routes (history, search, changes): docs/api.md.

const q = (params) => {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== "") sp.set(k, String(v));
  const s = sp.toString();
  return s ? `?${s}` : "";
};
const ws = (id) => `/workspace/${encodeURIComponent(id)}`;

/** A session's snapshot, the page `before` or `after` an item, or its first (`from: "start"`):
 * `limit` items, oldest first. @param {string} id
 * @param {{session: string, before?: string, after?: string, from?: string, limit?: number}} where */
export const sessionPath = (
  id,
  { session, before = undefined, after = undefined, from = undefined, limit = undefined },
) => `${ws(id)}/session${q({ session, before, after, from, limit })}`;
/** @param {string} id @param {{q: string, session?: string, limit?: number}} query */
export const searchPath = (id, { q: text, session = undefined, limit = undefined }) =>
  `${ws(id)}/search${q({ q: text, session, limit })}`;
/** @param {{q: string, workspace?: string, limit?: number}} query */
export const searchAllPath = ({ q: text, workspace = undefined, limit = undefined }) =>
  `/api/search${q({ q: text, workspace, limit })}`;
export const changesPath = (id, { session }) => `${ws(id)}/session/changes${q({ session })}`;
/** A session's card: ids, transcript, totals, files, first prompt. */
export const summaryPath = (id, { session }) => `${ws(id)}/session/summary${q({ session })}`;
/** A session as a file to download: `format` html, md or jsonl. */
export const exportPath = (id, { session, format }) => `${ws(id)}/session/export${q({ session, format })}`;
