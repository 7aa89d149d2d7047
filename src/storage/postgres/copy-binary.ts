import type { FieldType } from '../../catalog/types.js';
import type { Row, Value } from '../../model/values.js';

/**
 * Rows in PostgreSQL's binary COPY format: numbers travel as their 8 bytes (no formatting in
 * JavaScript, no parsing in the server, bit-exact), text as UTF-8. Produced in chunks of about
 * CHUNK_BYTES so a 100,000-record batch is never one giant buffer.
 *
 * The staging column of each field type must match `stagingType`.
 */

const CHUNK_BYTES = 256 * 1024;
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** The staging table's column type for a field type, as the binary encoding writes it. */
export function stagingType(t: FieldType): string {
  switch (t) {
    case 'number':
      return 'double precision';
    case 'integer':
      return 'bigint';
    case 'flag':
      return 'smallint';
    default:
      return 'text COLLATE "C"';
  }
}

type Writer = (buf: Buffer, off: number, v: Exclude<Value, null>) => number;

function writerFor(t: FieldType): { worst: (v: Exclude<Value, null>) => number; write: Writer } {
  const expect = (v: Value, type: 'number' | 'string'): void => {
    if (typeof v !== type) throw new TypeError(`a ${t} column received ${typeof v}`);
  };
  /** A fixed-width number: its length, then its `bytes` big-endian bytes. */
  const fixed = (bytes: number, put: (buf: Buffer, v: number, at: number) => void) => ({
    worst: () => 4 + bytes,
    write: (buf: Buffer, off: number, v: Exclude<Value, null>) => {
      expect(v, 'number');
      buf.writeInt32BE(bytes, off);
      put(buf, v as number, off + 4);
      return off + 4 + bytes;
    },
  });
  switch (t) {
    case 'number':
      return fixed(8, (buf, v, at) => buf.writeDoubleBE(v, at));
    case 'integer':
      return fixed(8, (buf, v, at) => buf.writeBigInt64BE(BigInt(v), at));
    case 'flag':
      return fixed(2, (buf, v, at) => buf.writeInt16BE(v, at));
    default:
      return {
        // UTF-16 code unit → at most 3 UTF-8 bytes.
        worst: (v) => 4 + (v as string).length * 3,
        write: (buf, off, v) => {
          expect(v, 'string');
          const n = buf.write(v as string, off + 4, 'utf8');
          buf.writeInt32BE(n, off);
          return off + 4 + n;
        },
      };
  }
}

/**
 * Yields binary COPY data for `rows`: the columns `cols` (of types `types`), then the text
 * `derived(row)` when given (the row's JSON).
 */
export function* binaryCopyChunks(
  rows: readonly Row[],
  cols: readonly string[],
  types: readonly FieldType[],
  derived?: (row: Row) => string,
): Generator<Buffer> {
  const writers = types.map(writerFor);
  const text = writerFor('string');
  const fieldCount = cols.length + (derived ? 1 : 0);
  let buf = Buffer.allocUnsafe(CHUNK_BYTES);
  SIGNATURE.copy(buf, 0);
  buf.writeInt32BE(0, 11); // flags
  buf.writeInt32BE(0, 15); // header extension length
  let off = 19;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Row;
    const extra = derived ? derived(row) : null;
    let need = 2 + 2 + (extra === null ? 0 : text.worst(extra)); // + field count, trailer
    for (let c = 0; c < cols.length; c++) {
      const v = row[cols[c] as string] ?? null;
      need += v === null ? 4 : (writers[c] as ReturnType<typeof writerFor>).worst(v);
    }
    if (off + need > buf.length) {
      yield buf.subarray(0, off);
      buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, need));
      off = 0;
    }
    buf.writeInt16BE(fieldCount, off);
    off += 2;
    for (let c = 0; c < cols.length; c++) {
      const v = row[cols[c] as string] ?? null;
      if (v === null) {
        buf.writeInt32BE(-1, off);
        off += 4;
      } else {
        off = (writers[c] as ReturnType<typeof writerFor>).write(buf, off, v);
      }
    }
    if (extra !== null) off = text.write(buf, off, extra);
  }
  if (off + 2 > buf.length) {
    yield buf.subarray(0, off);
    buf = Buffer.allocUnsafe(2);
    off = 0;
  }
  buf.writeInt16BE(-1, off);
  yield buf.subarray(0, off + 2);
}
