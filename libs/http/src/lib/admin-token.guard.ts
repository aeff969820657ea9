import { type CanActivate, type ExecutionContext, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { type Request } from 'express';

/** The secret of an `Authorization: Bearer <secret>` header; undefined for any other scheme or shape (no bare tokens). */
export function bearerSecret(header: string | undefined): string | undefined {
  return header?.match(/^Bearer ([\x21-\x7e]{1,512})$/i)?.[1];
}

/** A guard class for one service's admin API: the token comes from that service's options (`adminToken`).
 * Admin HTTP APIs take `Authorization: Bearer <admin token>` from configuration; compared in constant time. */
export function adminTokenGuard(optionsToken: symbol): new (...args: never[]) => CanActivate {
  @Injectable()
  class AdminTokenGuard implements CanActivate {
    constructor(@Inject(optionsToken) private readonly options: { adminToken: string }) {}

    canActivate(context: ExecutionContext): boolean {
      const given = Buffer.from(bearerSecret(context.switchToHttp().getRequest<Request>().headers.authorization) ?? '');
      const expected = Buffer.from(this.options.adminToken);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new UnauthorizedException({ code: 'ADMIN_TOKEN_INVALID', message: 'A valid admin token is required.' });
      }
      return true;
    }
  }
  return AdminTokenGuard;
}

/**
 * The provider `adminTokenGuard(optionsToken)` reads: the configured token, or — when none is configured — a random
 * one nobody knows, so the admin API refuses every call instead of accepting an empty token.
 */
export function adminTokenProvider(optionsToken: symbol, adminToken: string | undefined): { provide: symbol; useValue: { adminToken: string } } {
  return { provide: optionsToken, useValue: { adminToken: adminToken ?? randomBytes(32).toString('hex') } };
}
