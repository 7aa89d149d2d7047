import type { Catalog, Dataset } from '../catalog/catalog.js';
import { envelopeSchema } from '../contract/envelope.js';
import { rowSchema } from '../contract/rows.js';
import type { ApiOperation, ApiParameter } from './api-operations.js';
import { EXPORT_FORMATS } from '../export/export-formats.js';
import { revisionItemSchema } from '../contract/revisions.js';
import { revisionsPath } from '../query/revision-query.js';
import { endpointParameters, type QueryEndpoint } from '../query/query-params.js';

/**
 * The query endpoints as operations, one per catalog dataset and one per revision trail. Their
 * parameters are the declarations of query/query-params.ts, which the parser reads too.
 * Filter kinds are data (`x-mds-filter`), for generated clients.
 */

const parameters = (d: Dataset, e: QueryEndpoint): ApiParameter[] =>
  endpointParameters(d, e).map(({ name, ...doc }) => ({ name, in: 'query', ...doc }));

/**
 * The exports' media types, as the operation's `x-mds-exports` (format → media type), not as
 * further media types of the 200 answer: generated clients (openapi-fetch) type a 200 by all
 * of its media types, so listing them would make every JSON page a union with text and bytes.
 */
const exports = {
  'x-mds-exports': Object.fromEntries(
    Object.entries(EXPORT_FORMATS).map(([format, f]) => [format, f.mediaType]),
  ),
};

/** Every query endpoint's operation, and the revision trail of each dataset. */
export function queryOperations(catalog: Catalog): ApiOperation[] {
  return [
    ...catalog.datasets.map(datasetOperation),
    ...catalog.datasets.map((d) => revisionsOperation(d.blocks?.stored ?? d)),
  ];
}

/** GET /api/v1/revisions/{dataset} (docs/point-in-time.md). */
function revisionsOperation(d: Dataset): ApiOperation {
  return {
    method: 'get',
    path: revisionsPath(d),
    operationId: `revisions_${d.name}`,
    tags: ['revisions'],
    summary: `Revision trail of ${d.name}`,
    description:
      `Every kept revision of \`${d.name}\` (each change a batch made: insert, update, delete), sorted by ` +
      'valid_from then the unique key; the filters of its endpoint, batch_id and since/until on valid_from. ' +
      'Exports: NDJSON writes the items; CSV, Arrow and Parquet a flat table (op, batch_id, valid_from, ' +
      'valid_to, then the row).',
    auth: 'query',
    parameters: parameters(d, 'trail'),
    extensions: exports,
    responses: {
      200: {
        description:
          'revisions in the envelope (format=json), or all of them as an export in the media type x-mds-exports names',
        headers: {
          ETag: {
            description: 'changes when the dataset or its history changes',
            schema: { type: 'string' },
          },
        },
        content: {
          'application/json': envelopeSchema(revisionItemSchema(d, { required: true })),
        },
      },
      304: { description: 'not modified (If-None-Match)' },
    },
    errors: [4001, 4006, 4007, 4008],
  };
}

function datasetOperation(d: Dataset): ApiOperation {
  return {
    method: 'get',
    path: d.endpoint,
    operationId: `query_${d.name}`,
    tags: [d.layer],
    summary: d.description,
    description:
      `Dataset \`${d.name}\`. Default sort ${d.sort.field.apiName} ${d.sort.order}; ties broken by the ` +
      `unique key (${d.key.map((k) => k.apiName).join(', ')}).` +
      (d.range ? ` date_from/date_to apply to ${d.range.apiName}.` : ''),
    auth: 'query',
    parameters: parameters(d, 'rows'),
    // Row name → ingest name where they differ (code → symbol): a client pushes what it pulled.
    extensions: {
      ...exports,
      'x-mds-ingest-names': Object.fromEntries(
        d.fields.filter((f) => f.apiName !== f.name).map((f) => [f.apiName, f.name]),
      ),
    },
    responses: {
      200: {
        description:
          'rows in the envelope (format=json), or the whole result as an export in the media type x-mds-exports names',
        headers: {
          ETag: { description: 'changes when a batch changes the dataset', schema: { type: 'string' } },
        },
        content: { 'application/json': envelopeSchema(rowSchema(d, { required: true })) },
      },
      304: { description: 'not modified (If-None-Match)' },
    },
    errors: [4001, 4005, 4006, 4007, 4008],
  };
}
