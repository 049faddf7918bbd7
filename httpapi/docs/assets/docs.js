// Starts Swagger UI on the server's own OpenAPI document, with this server first among the
// servers that "Try it out" calls (the document names the default, localhost:8123).
// validatorUrl: null keeps the page from sending the document to validator.swagger.io: /docs
// makes no request beyond this server.
fetch("/openapi.json")
  .then((r) => r.json())
  .then((spec) => {
    const here = window.location.origin;
    spec.servers = [{ url: here, description: "this server" }].concat(
      (spec.servers || []).filter((s) => s.url !== here),
    );
    window.ui = SwaggerUIBundle({
      spec: spec,
      dom_id: "#swagger-ui",
      deepLinking: true,
      validatorUrl: null,
      presets: [SwaggerUIBundle.presets.apis],
      layout: "BaseLayout",
    });
  });
