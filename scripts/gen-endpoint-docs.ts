// Writes docs/endpoints.md from the catalog.
import { writeFileSync } from 'node:fs';
import { CATALOG } from '../src/catalog/catalog.js';
import { endpointDocs } from '../src/catalog/endpoint-docs.js';
import { EXPORT_FORMAT_NAMES } from '../src/export/export-formats.js';

writeFileSync(new URL('../docs/endpoints.md', import.meta.url), endpointDocs(CATALOG, EXPORT_FORMAT_NAMES));
console.log('wrote docs/endpoints.md');
