import { randomUUID } from 'node:crypto';
import { type OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { type OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { DEFAULT_OUTBOUND_POLICY, fetchLimited, type OutboundPolicy } from '@tollgate/http';
import { createLogger } from '@tollgate/observability';
import { checkClientMetadata } from './oauth-inputs';
import { type DataSource } from 'typeorm';
import { OAuthRecords } from './oauth.repository';

const logger = createLogger('gateway').child({ component: 'oauth-clients' });

/** A metadata document is small: a client's name, its redirect URIs, a few URLs. */
const MAX_DOCUMENT_BYTES = 5 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
const CACHE_MS = 5 * 60_000;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Where a client ID names its metadata document: an https URL with a path (the revision's client ID metadata
 * documents), or, only when the gateway itself serves loopback (a developer's machine), an http URL on loopback.
 */
export function metadataDocumentUrl(clientId: string, allowLoopbackHttp: boolean): URL | undefined {
  if (!URL.canParse(clientId)) return undefined;
  const url = new URL(clientId);
  if (url.hash || url.username || url.password || url.pathname === '/') return undefined;
  if (url.protocol === 'https:') return url;
  return url.protocol === 'http:' && allowLoopbackHttp && LOOPBACK.has(url.hostname) ? url : undefined;
}

/**
 * The clients the authorization server knows: a URL-shaped client ID is fetched as its metadata document (cached
 * for five minutes; no redirects followed, 5 KiB at most, its `client_id` must be that very URL, public clients
 * only); any other ID is a client registered dynamically (RFC 7591), kept in `gateway.oauth_client`.
 */
export class OAuthClients implements OAuthRegisteredClientsStore {
  private readonly documents = new Map<string, { client: OAuthClientInformationFull | undefined; until: number }>();
  /** Fetches under way: concurrent sign-ins naming one document share one fetch. */
  private readonly fetching = new Map<string, Promise<OAuthClientInformationFull | undefined>>();

  constructor(
    private readonly dataSource: Pick<DataSource, 'query'>,
    private readonly allowLoopbackHttp: boolean,
    private readonly outbound: OutboundPolicy = DEFAULT_OUTBOUND_POLICY,
  ) {}

  async getClient(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    const url = metadataDocumentUrl(clientId, this.allowLoopbackHttp);
    if (url) return this.fromDocument(clientId, url);
    const metadata = await OAuthRecords.registeredClient(this.dataSource, clientId);
    return metadata && ({ ...metadata, client_id: clientId } as OAuthClientInformationFull);
  }

  /** Public clients only (PKCE is their proof): a client secret would have to be kept readable to be checked. */
  async registerClient(client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>): Promise<OAuthClientInformationFull> {
    if (client.token_endpoint_auth_method !== 'none' || client.client_secret) {
      throw new InvalidClientMetadataError('Only public clients register here: send token_endpoint_auth_method "none" and use PKCE.');
    }
    // The gateway names the client; a registration never chooses its own client_id.
    const clientId = `tgc_${randomUUID().replace(/-/g, '')}`;
    const full = { ...client, client_id: clientId, client_id_issued_at: Math.floor(Date.now() / 1000) };
    await OAuthRecords.registerClient(this.dataSource, clientId, full);
    return full;
  }

  private async fromDocument(clientId: string, url: URL): Promise<OAuthClientInformationFull | undefined> {
    const hit = this.documents.get(clientId);
    if (hit && hit.until > Date.now()) return hit.client;
    const under = this.fetching.get(clientId);
    if (under) return under;
    const fetching = this.fetchDocument(clientId, url).catch((err: unknown) => {
      logger.info({ clientId, problem: String((err as Error)?.message ?? err) }, 'client metadata document refused');
      return undefined;
    }).then((client) => {
      this.documents.set(clientId, { client, until: Date.now() + CACHE_MS });
      if (this.documents.size > 1000) this.documents.clear();
      return client;
    }).finally(() => this.fetching.delete(clientId));
    this.fetching.set(clientId, fetching);
    return fetching;
  }

  /** The document, fetched as a hostile site would serve it: destination policy, no redirects, no compression, 5 KiB streamed. */
  private async fetchDocument(clientId: string, url: URL): Promise<OAuthClientInformationFull> {
    const res = await fetchLimited(url, this.outbound, { maxBytes: MAX_DOCUMENT_BYTES, timeoutMs: FETCH_TIMEOUT_MS, accept: 'application/json', allowHttp: this.allowLoopbackHttp });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    return clientOfDocument(clientId, res.body.toString('utf8'));
  }
}

function clientOfDocument(clientId: string, text: string): OAuthClientInformationFull {
  const doc = JSON.parse(text) as Record<string, unknown>;
  if (doc['client_id'] !== clientId) throw new Error('client_id of the document is not its URL');
  const checked = checkClientMetadata(doc);
  if (!checked.ok) throw new Error(checked.problem);
  const method = checked.metadata.token_endpoint_auth_method ?? 'none';
  if (method !== 'none') throw new Error(`token_endpoint_auth_method ${method}: only public clients are named by a document`);
  return { ...checked.metadata, client_id: clientId, token_endpoint_auth_method: 'none' };
}
