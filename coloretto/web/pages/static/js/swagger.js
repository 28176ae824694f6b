// The API documentation page (/docs): Swagger UI on the server's OpenAPI schema. A file of its
// own, not a script in the page, so that the page's Content-Security-Policy allows no inline script.
const root = document.getElementById("swagger-ui");
window.ui = window.SwaggerUIBundle({
  url: root.dataset.openapi,
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIBundle.SwaggerUIStandalonePreset],
});
