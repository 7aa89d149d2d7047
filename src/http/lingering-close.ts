import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * After an upload is refused before its body was read, how long the rest of it is read and
 * discarded before the connection is closed: in all (ms), without a byte arriving (ms), and in
 * bytes (SECURITY.md, reliability.md). nginx's lingering_close, with tighter bounds.
 */
export const LINGER_MS = 5_000;
export const LINGER_IDLE_MS = 1_000;
export const LINGER_BYTES = 16 * 1024 * 1024;

const lingering = new WeakSet<Socket>();

/**
 * Closes the connection of a request refused before its body was read (auth, size, budgets)
 * the way nginx's lingering_close does: the answer is sent and the write side closed (FIN),
 * then what the client still uploads is read and discarded, within the bounds above, before
 * the socket is closed. Closing at once with unread bytes makes the kernel answer the client's
 * next bytes with a reset, which can destroy the answer before the client, still uploading,
 * has read it (a 503 / 5032 seen as ECONNRESET under load). Node closes a `Connection: close`
 * response's socket with `destroySoon()` once the answer is written: that call is replaced for
 * this socket.
 */
export function lingerOnClose(req: IncomingMessage): void {
  const socket = req.socket as (Socket & { destroySoon?: () => void }) | null;
  if (!socket || lingering.has(socket) || typeof socket.destroySoon !== 'function') return;
  lingering.add(socket);
  const destroySoon = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    // Nothing more will come: close as Node would.
    if (req.complete || req.destroyed) return destroySoon();
    socket.end();
    let read = 0;
    const stop = (): void => {
      clearTimeout(all);
      clearTimeout(idle);
      socket.destroy();
    };
    const all = setTimeout(stop, LINGER_MS);
    const idle = setTimeout(stop, LINGER_IDLE_MS);
    // Node's server has dumped the body (resOnFinish): its bytes reach `req` and are dropped.
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > LINGER_BYTES) stop();
      else idle.refresh();
    });
    req.once('end', stop);
    req.once('error', stop);
    socket.once('end', stop);
    socket.once('close', () => {
      clearTimeout(all);
      clearTimeout(idle);
    });
    req.resume();
  };
}
