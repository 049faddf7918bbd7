// Starts Swagger UI on the server's own OpenAPI document. validatorUrl: null keeps the page from
// sending the document to validator.swagger.io: /docs makes no request beyond this server.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
