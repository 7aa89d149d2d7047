/**
 * The revision stamp's column names and the service's own batch ids: a leaf module, so that
 * the dataset table (schema.ts) and the revision table (revision-schema.ts) both take them
 * without importing each other.
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
