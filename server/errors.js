// Named errors, so callers branch on `code` and users read one clear line.

/** A setting (environment variable) that cannot be used. */
export class SettingsError extends Error {
  /** @param {string} message what is wrong, naming the variable */
  constructor(message) {
    super(message);
    this.name = 'SettingsError';
    this.code = 'ERR_INVALID_SETTING';
  }
}

/** A listener that could not bind its address. */
export class ListenError extends Error {
  /**
   * @param {string} protocol 'HTTP' or 'gRPC'
   * @param {string} address host:port that was asked for
   * @param {string} reason the system's reason, e.g. 'EADDRINUSE'
   */
  constructor(protocol, address, reason) {
    const why = reason === 'EADDRINUSE' ? 'is already in use' : `cannot be bound (${reason})`;
    super(`${protocol} port ${address} ${why}`);
    this.name = 'ListenError';
    this.code = reason === 'EADDRINUSE' ? 'ERR_PORT_IN_USE' : 'ERR_LISTEN';
  }
}

/** A listener that failed to start for a reason other than its address: a defect, not a busy port. */
export class StartError extends Error {
  /**
   * @param {string} listener the listener's name, e.g. 'grpc'
   * @param {Error} cause what its start threw
   */
  constructor(listener, cause) {
    super(`the ${listener} listener failed to start: ${cause?.message ?? cause}`, { cause });
    this.name = 'StartError';
    this.code = 'ERR_START';
  }
}
