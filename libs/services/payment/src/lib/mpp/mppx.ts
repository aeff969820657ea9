import type * as MppxCore from 'mppx' with { 'resolution-mode': 'import' };
import type * as MppxServer from 'mppx/server' with { 'resolution-mode': 'import' };

/**
 * mppx, loaded when MPP is first used: it ships ES modules only, which Node loads with require but jest's module
 * runtime cannot — so nothing that merely imports the payment service (a test that never pays by MPP) loads it.
 * Its declarations need the import resolution mode.
 */
export function mppxCore(): typeof MppxCore {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('mppx') as typeof MppxCore;
}

export function mppxServer(): typeof MppxServer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('mppx/server') as typeof MppxServer;
}
