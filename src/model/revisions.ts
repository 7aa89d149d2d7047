import type { Field } from '../catalog/catalog.js';

/**
 * The revision stamp's column names, the trail's fields over them, and the service's own batch
 * ids: shared by storage (the dataset table, schema.ts, and the revision table,
 * revision-schema.ts), the revision trail's query (query/revision-query.ts) and ingest.
 */
export const REV_OP = 'mds_op';
export const REV_BATCH = 'mds_batch_id';
export const REV_FROM = 'mds_valid_from';
export const REV_TO = 'mds_valid_to';

export type RevisionOp = 'insert' | 'update' | 'delete';

/** batch_id of the revisions the upgrade writes for rows stored before history existed. */
export const BASELINE_BATCH = 'baseline';
/** batch_id of the revisions a revert writes. */
export const revertBatchId = (batchId: string): string => `revert:${batchId}`;
/** Ids the service writes revisions under itself: a pushed batch may not take one. */
export const isReservedBatchId = (batchId: string): boolean =>
  batchId === BASELINE_BATCH || batchId.startsWith('revert:');

function revisionField(name: string, type: Field['type'], required: boolean): Field {
  return {
    name,
    apiName: name,
    type,
    required,
    enum: null,
    pattern: null,
    description: null,
    serverSet: false,
    exclusiveMinimum: null,
    unit: null,
  };
}

/** The revision columns as plan fields: the trail's filters and sort (`QueryPlan.trail`). */
export const REVISION_FIELDS = {
  op: revisionField(REV_OP, 'string', true),
  batchId: revisionField(REV_BATCH, 'string', true),
  validFrom: revisionField(REV_FROM, 'timestamp', true),
  validTo: revisionField(REV_TO, 'timestamp', false),
} as const;
