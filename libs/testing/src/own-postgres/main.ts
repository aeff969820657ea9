/**
 * A PostgreSQL server (from npm) a test controls from outside, in its own process (Jest cannot load the ESM-only
 * engine in-process): argv `<data-dir> <port>`. SIGUSR1 stops the server (connections refused), SIGUSR2 starts it
 * again, SIGTERM stops it and exits. Prints `[own-pg] up` / `[own-pg] down` after each change.
 */
import { startEmbeddedPostgres } from '@tollgate/persistence';

async function main(): Promise<void> {
  const [dir, port] = process.argv.slice(2);
  let server: { stop(): Promise<void> } | undefined;
  let queue = Promise.resolve();
  const up = () => (queue = queue.then(async () => {
    server ??= await startEmbeddedPostgres(dir!, Number(port), () => undefined);
    process.stdout.write('[own-pg] up\n');
  }));
  const down = () => (queue = queue.then(async () => {
    await server?.stop();
    server = undefined;
    process.stdout.write('[own-pg] down\n');
  }));
  process.on('SIGUSR1', () => void down());
  process.on('SIGUSR2', () => void up());
  process.on('SIGTERM', () => void down().then(() => process.exit(0)));
  await up();
  setInterval(() => undefined, 1 << 30);
}

main().catch((err: unknown) => {
  process.stderr.write(`[own-pg] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
