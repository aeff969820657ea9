import { metadataDocumentUrl } from './oauth-clients';
import { slugOfResource } from './oauth-provider';
import { resourceMetadataUrl } from './oauth-routes';

/** C2: a token names one MCP URL of this gateway; a client ID names its metadata document only where it is safe to fetch. */
describe('OAuth URLs', () => {
  const base = 'https://gw.example.com';

  it('a resource indicator names an MCP URL of this gateway, or nothing', () => {
    expect(slugOfResource(new URL('https://gw.example.com/mcp/Demo'), base)).toBe('demo');
    expect(slugOfResource(new URL('https://gw.example.com/mcp/demo/'), base)).toBe('demo');
    for (const other of ['https://evil.example.com/mcp/demo', 'http://gw.example.com/mcp/demo', 'https://gw.example.com/mcp/demo/x',
      'https://gw.example.com/admin', 'https://gw.example.com/mcp/demo?x=1', 'https://gw.example.com:8443/mcp/demo']) {
      expect(slugOfResource(new URL(other), base)).toBeUndefined();
    }
    expect(slugOfResource(undefined, base)).toBeUndefined();
  });

  it('a client ID metadata document is an https URL with a path; http only on loopback, and only when allowed', () => {
    expect(metadataDocumentUrl('https://app.example.com/oauth/client.json', false)?.href).toBe('https://app.example.com/oauth/client.json');
    for (const id of ['tgc_0123', 'https://app.example.com', 'https://app.example.com/', 'https://u:p@app.example.com/c.json', 'https://app.example.com/c.json#x',
      'http://app.example.com/c.json', 'file:///etc/passwd']) {
      expect(metadataDocumentUrl(id, true)).toBeUndefined();
    }
    expect(metadataDocumentUrl('http://127.0.0.1:4000/client.json', false)).toBeUndefined();
    expect(metadataDocumentUrl('http://127.0.0.1:4000/client.json', true)?.port).toBe('4000');
  });

  it('the protected-resource metadata of a URL sits under the well-known prefix (RFC 9728)', () => {
    expect(resourceMetadataUrl(base, 'demo')).toBe('https://gw.example.com/.well-known/oauth-protected-resource/mcp/demo');
  });
});
