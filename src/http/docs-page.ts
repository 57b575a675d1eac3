import type { Surface } from '../auth/roles.js';

/** The /docs page: Swagger UI from our own assets (no CDN), with a selector for the three surfaces. */
export function docsPage(paths: Record<Surface, string>): string {
  const urls = [
    { name: 'admin (/admin)', url: paths.admin },
    { name: 'root (/ and /adjudicator)', url: paths.root },
    { name: 'user (/user)', url: paths.user },
  ];
  const data = JSON.stringify(urls).replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>BIMS API documentation</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="bims-docs" data-urls="${data}"></div>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>`;
}
