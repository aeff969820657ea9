import { embeddedDefaults, takeEmbeddedFlags } from './embedded-connection';

/** One connection model for every tollgate-ops command. */
describe('tollgate-ops --embedded', () => {
  it('takes --embedded and --data-dir off the command line, wherever they are', () => {
    const argv = ['node', 'tollgate-ops', '--embedded', 'replay', '--verify', '--data-dir', '/tmp/d'];
    expect(takeEmbeddedFlags(argv)).toEqual({ embedded: true, dataDir: '/tmp/d' });
    expect(argv).toEqual(['node', 'tollgate-ops', 'replay', '--verify']);
    expect(takeEmbeddedFlags(['node', 't', 'parked', 'list', '--data-dir=/x'])).toEqual({ embedded: true, dataDir: '/x' });
    expect(takeEmbeddedFlags(['node', 't', 'parked', 'list'])).toEqual({ embedded: false });
  });

  it('points every service URL at the host, the tokens at demo.json\'s, the database at the embedded one; set variables win', () => {
    const demo = { adminToken: 'adm', operatorToken: 'op', financeToken: 'fin', consoleUrl: 'http://127.0.0.1:3100/console', databaseUrl: 'postgres://p:p@127.0.0.1:54329/tollgate' };
    const env = embeddedDefaults(demo, { PAYMENT_URL: 'http://elsewhere:1' });
    expect(env).toMatchObject({
      LEDGER_URL: 'http://127.0.0.1:3100', EXECUTION_URL: 'http://127.0.0.1:3100', DISCOVERY_URL: 'http://127.0.0.1:3100', SETTLEMENT_URL: 'http://127.0.0.1:3100',
      ADMIN_TOKEN: 'adm', EXECUTION_ADMIN_TOKEN: 'adm', LEDGER_TOKEN: 'op', DATABASE_URL: demo.databaseUrl, KAFKA_BROKERS: 'embedded',
    });
    expect(env['PAYMENT_URL']).toBeUndefined();
  });
});
