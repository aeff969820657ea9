import { createHash } from 'node:crypto';

/** What is stored of a secret credential (agent credentials, owner keys, OAuth tokens): its SHA-256, never the secret. */
export function hashCredential(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
