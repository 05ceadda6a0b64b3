import assert from "node:assert/strict";
import { test } from "node:test";

import {
  byteSize,
  clockTime,
  clockTimeSeconds,
  compactNumber,
  cost,
  dayClock,
  duration,
  localTimesIn,
  relativeTime,
} from "../../extension/lib/page/format.js";

test("token counts read as a person says them", () => {
  assert.equal(compactNumber(999), "999");
  assert.equal(compactNumber(1000), "1k");
  assert.equal(compactNumber(1250), "1.3k");
  assert.equal(compactNumber(152_000), "152k");
  assert.equal(compactNumber(2_000_000), "2M");
  assert.equal(compactNumber(null), "–");
});

test("sizes use decimal units, as file managers do", () => {
  assert.equal(byteSize(512), "512 B");
  assert.equal(byteSize(1500), "1.5 kB");
  assert.equal(byteSize(104_857_600), "105 MB");
  assert.equal(byteSize(undefined), "");
});

test("durations pick the unit that keeps them short", () => {
  assert.equal(duration(250), "250 ms");
  assert.equal(duration(4200), "4.2 s");
  assert.equal(duration(61_000), "1 m 1 s");
  assert.equal(duration(3_600_000 + 120_000), "1 h 2 m");
});

test("a duration never reads 60 of a unit: it carries over", () => {
  assert.equal(duration(119_600), "2 m");
  assert.equal(duration(59_700), "1 m");
  assert.equal(duration(9_970), "10 s");
  assert.equal(duration(999.7), "1.0 s");
  assert.equal(duration(3_599_700), "1 h");
  assert.equal(duration(7_170_000), "1 h 59 m"); // past an hour: hours and minutes only
});

test("an estimated cost says so, and small costs keep their digits", () => {
  assert.equal(cost(0.0042, "estimated"), "≈$0.0042");
  assert.equal(cost(0.5, "reported"), "$0.500");
  assert.equal(cost(12.345, "reported"), "$12.35");
  assert.equal(cost(null, "reported"), null);
});

test("relative times take ISO strings, epoch seconds and milliseconds", () => {
  const now = Date.parse("2026-12-05T12:00:00Z");
  assert.equal(relativeTime("2026-12-05T11:59:50Z", now), "just now");
  assert.equal(relativeTime(now / 1000 - 600, now), "10 min ago");
  assert.equal(relativeTime(now - 3 * 3600 * 1000, now), "3 h ago");
  assert.equal(relativeTime("not a date", now), "");
});

test("localTimesIn writes the server's ISO instants as the local clock, and leaves the rest", () => {
  const iso = "2026-12-01T18:19:34.615767Z";
  const text = `Answer: allowed from the side panel at ${iso}`;
  assert.equal(localTimesIn(text), `Answer: allowed from the side panel at ${clockTimeSeconds(iso)}`);
  assert.doesNotMatch(localTimesIn(text), /2026-12-01T|615767/);
  assert.equal(localTimesIn("at 2026-13-45T99:99:99Z"), "at 2026-13-45T99:99:99Z"); // not a date
  assert.equal(localTimesIn("no time here"), "no time here");
});

test("an item's time is the clock alone today, with its day on any other day", () => {
  const now = new Date(2026, 11, 5, 15, 30).getTime(); // 5 Dec 2026, 15:30 local
  const today = new Date(2026, 11, 5, 0, 1).toISOString();
  assert.equal(dayClock(today, now), clockTime(today));
  const yesterday = new Date(2026, 11, 4, 23, 59).toISOString(); // a minute before today
  const shown = dayClock(yesterday, now);
  assert.notEqual(shown, clockTime(yesterday));
  assert.match(shown, /\b4\b/); // the day of the month
  assert.match(shown, /Dec/);
  assert.doesNotMatch(shown, /2026/); // this year's days need no year
  const lastYear = new Date(2025, 11, 5, 15, 30).toISOString(); // the same day, a year before
  assert.match(dayClock(lastYear, now), /2025/);
  assert.equal(dayClock("not a date", now), "");
  assert.equal(dayClock(undefined, now), "");
});
