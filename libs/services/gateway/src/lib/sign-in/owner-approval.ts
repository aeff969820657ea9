import { HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type Response } from 'express';
import { hashCredential } from '../authenticate/credential-hash';
import { GATEWAY } from '../gateway.constants';
import { RateLimits } from '../rate-limit/rate-limits.service';
import { SignIns } from './sign-ins.repository';

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The small HTML page of an owner's approval (a device's sign-in or an OAuth client's consent). */
export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}
code{font-size:1.4rem;letter-spacing:.1em}label,input,button{display:block;margin:.5rem 0}input{width:100%;padding:.4rem}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/**
 * The headers of every page that acts with an owner's key (device approval, OAuth consent): it may not be framed
 * (a framing page could make the owner click "approve"), loads nothing from elsewhere, and its form posts only to this
 * origin and to `formTargets` (the OAuth client's redirect origin, where the consent's answer goes).
 */
export function ownerPageHeaders(res: Response, formTargets: readonly string[] = []): void {
  res.setHeader('Content-Security-Policy', `default-src 'none'; style-src 'unsafe-inline'; form-action ${["'self'", ...formTargets].join(' ')}; frame-ancestors 'none'; base-uri 'none'`);
  res.setHeader('X-Frame-Options', 'DENY');
  // same-origin, not no-referrer: the form's POST must keep its Origin (the browser guard checks it).
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

/**
 * Who approves: the owner, by an owner key. Owner keys cannot be guessed from one address or sprayed from many: the
 * credential-failure limits apply, and only a wrong key counts against them.
 */
@Injectable()
export class OwnerApproval {
  constructor(
    private readonly limits: RateLimits,
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
  ) {}

  async ownerOf(ownerKey: string, clientAddress: string): Promise<{ ok: true; ownerId: string } | { ok: false; reason: 'limited' | 'owner_key_invalid' }> {
    const subjects = [['authFailures', `addr:${clientAddress}`], ['authFailuresPerSecret', `secret:${hashCredential(ownerKey)}`]] as const;
    for (const [limit, subject] of subjects) {
      if (!(await this.limits.exhausted(limit, subject)).ok) return { ok: false, reason: 'limited' };
    }
    const ownerId = await SignIns.ownerOfKey(this.dataSource, hashCredential(ownerKey));
    if (ownerId) return { ok: true, ownerId };
    await Promise.all(subjects.map(([limit, subject]) => this.limits.consume(limit, subject)));
    return { ok: false, reason: 'owner_key_invalid' };
  }

  /** The owner of a key, or the refusal every JSON route answers: 429 RATE_LIMITED or 403 OWNER_KEY_INVALID. */
  async ownerOrRefuse(ownerKey: string, clientAddress: string): Promise<string> {
    const owner = await this.ownerOf(ownerKey, clientAddress);
    if (owner.ok) return owner.ownerId;
    if (owner.reason === 'limited') throw new HttpException({ code: 'RATE_LIMITED', retryable: true, message: 'Too many attempts. Wait a minute, then try again.' }, HttpStatus.TOO_MANY_REQUESTS);
    throw new HttpException({ code: 'OWNER_KEY_INVALID', retryable: false, message: 'That owner key is not valid.' }, HttpStatus.FORBIDDEN);
  }
}
