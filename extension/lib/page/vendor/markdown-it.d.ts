// The vendored markdown-it bundle is checked by its authors, not by us: this declaration stands
// in for it so the type checker reads our calls to it without reading its minified source.
declare const markdownit: (preset?: string | Record<string, unknown>, options?: Record<string, unknown>) => any;
export default markdownit;
