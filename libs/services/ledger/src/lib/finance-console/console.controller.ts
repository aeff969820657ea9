import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Controller, Get, Header, NotFoundException, Param, Res } from '@nestjs/common';
import { type Response } from 'express';
import { ApiExcludeController } from '@nestjs/swagger';

/** The console's static files: public (they hold no data — every figure is fetched with the finance token typed in). */
const ASSETS: Record<string, { file: string; type: string }> = {
  'console.js': { file: path.join(__dirname, 'assets', 'console.js'), type: 'text/javascript; charset=utf-8' },
  'console.css': { file: path.join(__dirname, 'assets', 'console.css'), type: 'text/css; charset=utf-8' },
  'chart.umd.js': { file: path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'), type: 'text/javascript; charset=utf-8' },
};

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The finance console, served by the ledger app and the embedded host at `/console`: sign in with a
 * finance token, an overview with charts, the journal with filters, a call's timeline, statements with CSV, and the
 * reconciliation report — all read through the finance API with that token. A strict Content-Security-Policy: only
 * these files run, and everything shown from the API is set as text, never as markup.
 */
@ApiExcludeController()
@Controller('console')
export class ConsoleController {
  private readonly cache = new Map<string, string>();

  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('content-security-policy', CSP)
  @Header('cache-control', 'no-store')
  index(): string {
    return this.read('index.html', path.join(__dirname, 'assets', 'index.html'));
  }

  @Get(':file')
  @Header('content-security-policy', CSP)
  @Header('x-content-type-options', 'nosniff')
  asset(@Param('file') file: string, @Res({ passthrough: true }) res: Response): string {
    const asset = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!asset) throw new NotFoundException({ code: 'NOT_FOUND', message: 'No such console file.' });
    res.setHeader('content-type', asset.type);
    return this.read(file, asset.file);
  }

  private read(key: string, file: string): string {
    if (!this.cache.has(key)) this.cache.set(key, readFileSync(file, 'utf8'));
    return this.cache.get(key)!;
  }
}
