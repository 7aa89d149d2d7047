/**
 * The shape of a dataset declaration: plain data, one per dataset, from which ingest
 * validation, storage tables and indexes, query endpoints, filters and OpenAPI follow.
 */

export type FieldType = 'string' | 'number' | 'integer' | 'date' | 'timestamp' | 'flag';

/** Shorthand: `'number'` is optional, `'number!'` is required. */
export type FieldShorthand = FieldType | `${FieldType}!`;

export interface FieldDetail {
  readonly type: FieldType;
  readonly required?: boolean;
  /** Allowed values (strings or integers). */
  readonly enum?: readonly (string | number)[];
  /** Regular expression a string value must match (anchored by the author). */
  readonly pattern?: string;
  readonly description?: string;
}

export type FieldSpec = FieldShorthand | FieldDetail;

export interface DatasetDeclaration {
  /** Dataset name = `meta.dataset` = `meta.table` = storage table. */
  readonly name: string;
  readonly layer: 'standardized' | 'features' | 'query' | 'us';
  readonly description: string;
  /** Query path under which rows are served. */
  readonly endpoint: string;
  /** Ingest field names in the order rows are returned. `created_at` is added by the server. */
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Ingest name → row (API) name, for the standardized layer (`symbol` → `code`). */
  readonly rename?: Readonly<Record<string, string>>;
  /** Unique key, ingest names: the fields of `unique_key`. */
  readonly key: readonly string[];
  /** Ingest field that `business_date` selects for a full snapshot; null: one partition per source. */
  readonly partition: string | null;
  /** Row field that `date_from` / `date_to` apply to; null: no range filter. */
  readonly range: string | null;
  /** Default sort (row field) and order. */
  readonly sort: { readonly field: string; readonly order: 'asc' | 'desc' };
  /** Exact-match filters, row names. */
  readonly exact: readonly string[];
  /** `%value%` case-insensitive filters, row names. */
  readonly like?: readonly string[];
  /**
   * The field that plays the role of `source` for full-snapshot partitions; defaults to
   * `source` when the dataset has one.
   */
  readonly sourceField?: string;
}
