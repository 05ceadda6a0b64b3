// A website as the page overlay's opt-in knows it: an http(s) origin, and Chrome's match pattern
// for it (host permissions and content scripts alike). Used by the worker and the Activity tab.

/** The origin of an http(s) URL (`http://shop.test:8080`), or null. */
export function originOf(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}

/** The match pattern for every page of one origin. */
export function patternOf(origin) {
  return `${origin}/*`;
}
