// ESLint for the extension and its unit tests: the recommended rules, the globals of each
// context the files run in (extension pages and the service worker, page scripts, Node's tests).
import js from "@eslint/js";
import globals from "globals";

export default [
  {
    // .bench holds the peers scripts/bench installs (their own JS, not ours).
    ignores: ["extension/lib/page/vendor/**", "**/node_modules/**", ".venv/**", ".bench/**", "build/**", "dist/**"],
  },
  js.configs.recommended,
  {
    files: ["extension/**/*.js"],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: { ...globals.browser, ...globals.serviceworker, ...globals.webextensions },
    },
    rules: {
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    files: ["extension/content/**/*.js"],
    languageOptions: { sourceType: "script" },
  },
  {
    // The benchmark's page runs in Chromium like the side panel.
    files: ["bench/**/*.js"],
    languageOptions: { ecmaVersion: 2023, sourceType: "module", globals: { ...globals.browser } },
  },
  {
    // dom-env.js gives the tests a `document` (linkedom) as the side panel has one.
    files: ["tests/js/**/*.js"],
    languageOptions: { ecmaVersion: 2023, sourceType: "module", globals: { ...globals.node, document: "readonly" } },
  },
];
