// Small formatting helpers shared by side panel tabs.

export function compactNumber(n) {
  if (n == null || Number.isNaN(n)) return "–";
  if (n < 1000) return String(n);
  if (n < 10000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  if (n < 1e6) return `${Math.round(n / 1000)}k`;
  return `${(n / 1e6).toFixed(1).replace(/\.0$/, "")}M`;
}

/** 1.2 GB style (decimal units, as file managers show sizes). */
export function byteSize(n) {
  if (n == null || Number.isNaN(n)) return "";
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n;
  let i = -1;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${v < 10 ? v.toFixed(1).replace(/\.0$/, "") : Math.round(v)} ${units[i]}`;
}

export function duration(ms) {
  if (ms == null) return "";
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  if (ms < 9950) return `${(ms / 1000).toFixed(1)} s`;
  // Round once, then split: rounding each part on its own gave "1 m 60 s" for 119.6 s.
  const total = Math.round(ms / 1000);
  if (total < 60) return `${total} s`;
  const m = Math.floor(total / 60);
  const rest = total % 60;
  if (m < 60) return rest ? `${m} m ${rest} s` : `${m} m`;
  return m % 60 ? `${Math.floor(m / 60)} h ${m % 60} m` : `${m / 60} h`;
}

export function cost(usd, source) {
  if (usd == null) return null;
  const approx = source === "estimated" ? "≈" : "";
  const digits = usd < 0.01 ? 4 : usd < 1 ? 3 : 2;
  return `${approx}$${usd.toFixed(digits)}`;
}

// Times: one format everywhere, the browser's own (its locale, and the 12 or 24 hour clock
// that locale uses), with the full date and time zone on hover (`fullTime`, as a title).
// A 24-hour clock writes the hour with two digits ("00:05", as en-GB does); asked for a
// "numeric" hour, Chromium writes "0:05" there. A 12-hour clock keeps one ("9:05 AM").
const H24 = ["h23", "h24"].includes(
  new Intl.DateTimeFormat(undefined, { hour: "numeric" }).resolvedOptions().hourCycle,
);
const HOUR = H24 ? "2-digit" : "numeric";
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: HOUR, minute: "2-digit" });
const CLOCK_SECONDS = new Intl.DateTimeFormat(undefined, { hour: HOUR, minute: "2-digit", second: "2-digit" });
const FULL = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "long" });

function dateOf(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** "7:26 PM" or "19:26", as the browser's locale says. */
export function clockTime(iso) {
  const d = dateOf(iso);
  return d ? CLOCK.format(d) : "";
}

/** "Tuesday, 1 December 2026 at 19:26:03 UTC" in the browser's locale: for tooltips. */
export function fullTime(iso) {
  const d = dateOf(iso);
  return d ? FULL.format(d) : "";
}

/** "3 min ago" style; input is an ISO string or epoch seconds. */
export function relativeTime(value, now = Date.now()) {
  if (value == null) return "";
  const t = typeof value === "number" ? value * (value < 1e12 ? 1000 : 1) : new Date(value).getTime();
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

/** `clockTime` with seconds, for feeds where order within a minute matters (the same format). */
export function clockTimeSeconds(iso) {
  const d = dateOf(iso);
  return d ? CLOCK_SECONDS.format(d) : "";
}

const DAY_TIME = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: HOUR, minute: "2-digit" });

// An ISO 8601 instant with its zone, as the server writes them in text ("…T18:19:34.615767Z").
const ISO_IN_TEXT = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})/g;

/** `text` with each ISO instant in it written as `clockTimeSeconds` (the browser's local time);
 * one that does not parse stays as it was. For server text that states a time in words. */
export function localTimesIn(text) {
  return String(text).replace(ISO_IN_TEXT, (iso) => clockTimeSeconds(iso) || iso);
}

const YEAR_DAY_TIME = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: HOUR,
  minute: "2-digit",
});

function sameDay(a, b) {
  return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
}

/** When an item was written, as short as tells it apart: "14:05" today, "3 Dec, 14:05" on
 * another day of this year, "3 Dec 2025, 14:05" before it (the browser's locale and local day). */
export function dayClock(iso, now = Date.now()) {
  const d = dateOf(iso);
  if (!d) return "";
  const today = new Date(now);
  if (sameDay(d, today)) return CLOCK.format(d);
  return (d.getFullYear() === today.getFullYear() ? DAY_TIME : YEAR_DAY_TIME).format(d);
}
