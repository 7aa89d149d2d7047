// Writes docs/endpoints.md from the catalog.
import { writeFileSync } from 'node:fs';
import { CATALOG } from '../src/catalog/catalog.js';
import { endpointDocs } from '../src/catalog/endpoint-docs.js';
import { EXPORT_FORMAT_NAMES } from '../src/export/export-formats.js';
import { parameterRows } from '../src/query/query-params.js';

writeFileSync(
  new URL('../docs/endpoints.md', import.meta.url),
  endpointDocs(CATALOG, EXPORT_FORMAT_NAMES, parameterRows(CATALOG.datasets)),
);
console.log('wrote docs/endpoints.md');
