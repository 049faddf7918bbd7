// The Overview page: not built yet.

import { h, mount } from "../dom.js";

/** render shows that the page is not built yet. */
export function render(root: HTMLElement, _params: Record<string, string>): void {
  mount(root, h("h1", null, "Overview"), h("p", { class: "muted" }, "Overview: not built yet."));
}
