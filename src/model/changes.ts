import { Type, type Static } from '@sinclair/typebox';
import { adjustOf, type Catalog, type Dataset, type Field } from '../catalog/catalog.js';

/**
 * The change feed (docs/changes.md): one event per committed change of a dataset's rows, its id
 * taken from a stored sequence inside the change's transaction. Shared by storage (which
 * records and reads events), the feed service and the HTTP and MCP answers.
 */

/**
 * What a change was. `vintage` is reserved for changes that publish a new vintage of a series;
 * nothing records it yet, so a client's switch over the kinds already has its case.
 */
export const CHANGE_KINDS = [
  'batch',
  'revert',
  'snapshot_prune',
  'factor_change',
  'calendar_change',
  'vintage',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** An event lists its codes up to this many; beyond, only their count and range (`codes` null). */
export const MAX_EVENT_CODES = 1000;

const nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);

export const ChangeEventSchema = Type.Object(
  {
    id: Type.Integer({ description: 'the event id: increasing in commit order across every dataset' }),
    dataset: Type.String(),
    kind: Type.Union(
      CHANGE_KINDS.map((k) => Type.Literal(k)),
      { description: 'what the change was (docs/changes.md)' },
    ),
    batch_id: Type.String({ description: 'the batch that made the change; revert:<id> for a revert' }),
    known_at: Type.String({
      format: 'date-time',
      description: "the instant it became known: the batch's processed_at, a revert's reverted_at",
    }),
    version: Type.Integer({ description: "the dataset's version after the change (its ETag's own part)" }),
    inserted: Type.Integer(),
    updated: Type.Integer(),
    deleted: Type.Integer(),
    code_field: nullable(Type.String({ description: 'the row field the codes are of; null: none' })),
    code_count: Type.Integer({ description: 'distinct codes the change touched' }),
    codes: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description: `the codes touched, sorted; null when more than ${MAX_EVENT_CODES} (see code_from, code_to)`,
    }),
    code_from: nullable(Type.String()),
    code_to: nullable(Type.String()),
    date_field: nullable(Type.String({ description: 'the row field the date span is of; null: none' })),
    date_from: nullable(Type.String()),
    date_to: nullable(Type.String()),
    adjusts: Type.Array(Type.String(), {
      description:
        'a factor_change: the datasets whose adjusted answers (adjust=qfq|hfq) of these codes it changes',
    }),
  },
  { title: 'ChangeEvent' },
);

export type ChangeEvent = Static<typeof ChangeEventSchema>;

/** The datasets whose `adjust` reads factors from `d`. */
export function adjustedBy(catalog: Catalog, d: Dataset): string[] {
  return catalog.datasets.filter((x) => adjustOf(x)?.factors === d.name).map((x) => x.name);
}

/** The kind of a change of `d` (a revert, or a batch that pruned `pruned` rows). */
export function changeKind(
  catalog: Catalog,
  d: Dataset,
  change: { revert: boolean; pruned: number },
): ChangeKind {
  if (change.revert) return 'revert';
  if (d.factors !== null || adjustedBy(catalog, d).length > 0) return 'factor_change';
  if (d.calendar !== null) return 'calendar_change';
  return change.pruned > 0 ? 'snapshot_prune' : 'batch';
}

/** The field an event's codes are of: the dataset's first code field in its key (null: none). */
export function codeFieldOf(d: Dataset): Field | null {
  return d.key.find((f) => d.codes.has(f)) ?? null;
}
