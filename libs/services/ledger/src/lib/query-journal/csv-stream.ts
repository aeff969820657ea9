import { once } from 'node:events';
import { type Response } from 'express';

/** Writes a CSV download line by line, waiting whenever the client is slower than the database (no buffering of the whole file). */
export async function streamCsv(res: Response, filename: string, header: string, lines: AsyncIterable<string>): Promise<void> {
  res.status(200).setHeader('Content-Type', 'text/csv; charset=utf-8').setHeader('Content-Disposition', `attachment; filename="${filename}"`).setHeader('Cache-Control', 'no-store');
  res.write(header);
  try {
    for await (const line of lines) {
      if (res.destroyed) return;
      if (!res.write(line)) await once(res, 'drain');
    }
    res.end();
  } catch {
    // Headers are gone: the only honest signal left is a cut connection (the client sees an incomplete download).
    res.destroy();
  }
}
