// The Deployments page: not built yet.
import { h, mount } from "../dom.js";
/** render shows that the page is not built yet. */
export function render(root, _params) {
    mount(root, h("h1", null, "Deployments"), h("p", { class: "muted" }, "Deployments: not built yet."));
}
