import assert from 'node:assert/strict';
import { test } from 'node:test';
import v8 from 'node:v8';
import {
  fromColumns,
  movable,
  toColumns,
  valueAt,
  type ValueColumns,
} from '../../src/model/value-columns.js';
import type { Value } from '../../src/model/values.js';

/**
 * An export's chunk column by column (model/value-columns.ts), as the reader process sends it
 * (the IPC's serialization) and the request thread moves it to an encoding thread: every value
 * comes back as it was read — the same double (−0, the smallest and largest ones), the same
 * string (empty, non-ASCII, astral), null as null — whatever the column holds.
 */

const ROWS: Value[][] = [
  [-0, 'a', null, 'x', null, 1],
  [0, '', null, 2, 'é€😀', 2],
  [Number.MIN_VALUE, 'ä😀', null, null, '', null],
  [Number.MAX_VALUE, null, null, 'y', 'z', 9007199254740991],
  [-1.5e-300, 'last', null, 3.25, null, -4],
];

/** Through the reader process's channel (serialization 'advanced' is v8's serializer). */
function overIpc(c: ValueColumns): ValueColumns {
  return v8.deserialize(v8.serialize(c)) as ValueColumns;
}

test('columns give back every value as read: doubles bit for bit, strings, nulls, mixed columns', () => {
  const chunk = toColumns(ROWS);
  assert.deepEqual(
    chunk.columns.map((c) => c.kind),
    ['number', 'text', 'number', 'values', 'text', 'number'],
  );
  for (const c of [chunk, overIpc(chunk), movable(overIpc(chunk)).chunk]) {
    const back = fromColumns(c);
    assert.equal(back.length, ROWS.length);
    for (const [i, row] of ROWS.entries()) {
      for (const [j, v] of row.entries()) {
        assert.ok(
          Object.is(back[i]?.[j], v),
          `row ${i} column ${j}: ${String(back[i]?.[j])} for ${String(v)}`,
        );
        assert.ok(Object.is(valueAt(c.columns[j]!, i), v));
      }
    }
  }
});

test('no rows: no columns, and no rows back', () => {
  const c = toColumns([]);
  assert.deepEqual(c, { length: 0, columns: [] });
  assert.deepEqual(fromColumns(c), []);
});

test('a chunk moved to another thread takes its buffers along, copied first when they are views into a larger one', () => {
  const ipc = overIpc(toColumns(ROWS));
  const { chunk, transfer } = movable(ipc);
  // Each number column's values and each text column's ends (5), and the nulls of the 4 with nulls.
  assert.equal(transfer.length, 5 + 4);
  for (const b of transfer) assert.ok(b.byteLength < 1024, 'a buffer of its own, not the whole message');
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(chunk, transfer);
  for (const b of transfer) assert.equal(b.byteLength, 0, 'moved, not copied');
  port1.close();
  port2.close();
  // The chunk read before the move is untouched: it held views into the message's buffer.
  assert.ok(Object.is(fromColumns(ipc)[0]?.[0], -0));
});
