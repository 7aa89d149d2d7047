import type { Dataset, Field } from '../../src/catalog/catalog.js';
import type { Value } from '../../src/model/values.js';
import type { Data } from './batches.js';
import { hhmm } from '../../src/ingest/minute-bars.js';

/** Valid sample values for any catalog field, so suites can cover all 32 datasets generically. */
const PATTERN_SAMPLES: Record<string, (i: number) => string> = {
  '^\\d{10}$': (i) => String(320193 + i).padStart(10, '0'),
  '^(0[1-9]|1[0-2])(0[1-9]|[12]\\d|3[01])$': () => '0930',
};

export function sampleValue(f: Field, i: number, date: string): unknown {
  if (f.enum) return f.enum[i % f.enum.length];
  if (f.pattern) {
    const s = PATTERN_SAMPLES[f.pattern.source];
    if (s) return s(i);
    if (f.name === 'period') return date.slice(0, 7);
    throw new Error(`no sample for pattern ${f.pattern.source}`);
  }
  switch (f.type) {
    case 'string':
      return f.name === 'source' || f.name === 'source_type' ? 'src' : `${f.name}-${i}`;
    case 'number':
      return 1.25 + i / 8;
    case 'integer':
      return i + 1;
    case 'flag':
      return i % 2;
    case 'date':
      return date;
    case 'timestamp':
      return '2024-01-02T03:04:05Z';
  }
}

/** Row i of a dataset: every field filled; partition (and key dates) on `date`. */
export function sampleRow(d: Dataset, i: number, date = '2024-01-02'): Data {
  const row: Data = {};
  for (const f of d.fields) row[f.name] = sampleValue(f, i, date);
  // Intraday bars end on a session minute of their date (09:31 + i).
  const b = d.blocks;
  if (b) {
    const m = b.sessions[0]?.[0] ?? 0;
    row[b.time.name] = `${date}T${hhmm(m + 1 + (i % 120))}:00${b.utcOffset}`;
  }
  return row;
}

/**
 * Row `i` of etf_daily as an export reads it, in `fields`' order (its row fields: code, date,
 * prices…, source, updated_at, created_at): 500 dates per code, some nulls in the nullable numbers.
 */
export function exportRow(fields: readonly Field[], i: number, source = 'test'): Value[] {
  const date = new Date(Date.UTC(2020, 0, 1) + (i % 500) * 86_400_000).toISOString().slice(0, 10);
  return fields.map((f) => {
    if (f.apiName === 'code') return String(510000 + Math.floor(i / 500));
    if (f.apiName === 'date') return date;
    if (f.apiName === 'source') return source;
    if (f.type === 'timestamp') return '2026-01-02T03:04:05.678Z';
    if (!f.required && i % 7 === 0) return null;
    return (i % 1000) / 8 + 0.1;
  });
}
