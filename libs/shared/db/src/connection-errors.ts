/** True for an error after which a connection must not go back to the pool. */
export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  // SQLSTATE class 08 (connection exception) and 57P (operator intervention: shutdown, terminated backend)
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
    return code.startsWith('08') || code.startsWith('57P');
  // no SQLSTATE: a socket error or a closed connection
  return true;
}
