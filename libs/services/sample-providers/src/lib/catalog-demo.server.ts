import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

type Listing = { category: string; tags: string[]; summary?: string; priceMinor?: string; freeCallsPerDay?: number; tier?: string };

interface DemoTool {
  name: string;
  description: string;
  input: Record<string, z.ZodTypeAny>;
  listing: Listing;
  readOnly: boolean;
}

/** A realistic marketplace in miniature, for ranking, paging and listing tests and the demo. */
const TOOLS: DemoTool[] = [
  { name: 'get_weather', description: 'Current weather conditions for a city: temperature, wind and sky.', input: { city: z.string() }, listing: { category: 'weather', tags: ['weather', 'temperature', 'city'], priceMinor: '1000', freeCallsPerDay: 3 }, readOnly: true },
  { name: 'weather_forecast', description: 'Seven-day weather forecast for a city or coordinates, with rain probability.', input: { city: z.string(), days: z.number().int().min(1).max(7).optional() }, listing: { category: 'weather', tags: ['forecast', 'weather', 'rain'], priceMinor: '2000' }, readOnly: true },
  { name: 'air_quality', description: 'Air quality index and pollutant levels for a city.', input: { city: z.string() }, listing: { category: 'weather', tags: ['air', 'pollution'] }, readOnly: true },
  { name: 'create_support_ticket', description: 'Creates a customer support ticket in the help desk with a title, description and priority.', input: { title: z.string(), description: z.string(), priority: z.enum(['low', 'normal', 'high']).optional() }, listing: { category: 'support', tags: ['ticket', 'helpdesk', 'support', 'create'], priceMinor: '5000' }, readOnly: false },
  { name: 'get_support_ticket', description: 'Reads a support ticket by its id, with status and replies.', input: { ticketId: z.string() }, listing: { category: 'support', tags: ['ticket', 'helpdesk', 'read'] }, readOnly: true },
  { name: 'close_support_ticket', description: 'Closes a resolved support ticket.', input: { ticketId: z.string() }, listing: { category: 'support', tags: ['ticket', 'helpdesk'] }, readOnly: false },
  { name: 'convert_currency', description: 'Converts an amount between two currencies at the current exchange rate.', input: { amount: z.string(), from: z.string(), to: z.string() }, listing: { category: 'finance', tags: ['currency', 'exchange', 'fx'], priceMinor: '500' }, readOnly: true },
  { name: 'stock_quote', description: 'Latest stock price quote for a ticker symbol.', input: { symbol: z.string() }, listing: { category: 'finance', tags: ['stocks', 'market', 'price'], priceMinor: '1500', tier: 'premium' }, readOnly: true },
  { name: 'translate_text', description: 'Translates text into another language.', input: { text: z.string(), targetLanguage: z.string() }, listing: { category: 'language', tags: ['translation', 'language'] , priceMinor: '800' }, readOnly: true },
  { name: 'summarize_document', description: 'Summarizes a long document into a few sentences.', input: { text: z.string(), sentences: z.number().int().optional() }, listing: { category: 'language', tags: ['summary', 'nlp'] }, readOnly: true },
  { name: 'geocode_address', description: 'Turns a street address into latitude and longitude coordinates.', input: { address: z.string() }, listing: { category: 'maps', tags: ['geocoding', 'address', 'location'] }, readOnly: true },
  { name: 'route_directions', description: 'Driving, walking or cycling directions between two places.', input: { from: z.string(), to: z.string() }, listing: { category: 'maps', tags: ['directions', 'navigation'] }, readOnly: true },
  { name: 'send_email', description: 'Sends an email message to a recipient.', input: { to: z.string(), subject: z.string(), body: z.string() }, listing: { category: 'messaging', tags: ['email', 'send'], priceMinor: '300' }, readOnly: false },
  { name: 'send_sms', description: 'Sends a text message to a phone number.', input: { phone: z.string(), message: z.string() }, listing: { category: 'messaging', tags: ['sms', 'phone'], priceMinor: '700' }, readOnly: false },
  { name: 'search_flights', description: 'Searches flights between two airports on a date, with prices.', input: { from: z.string(), to: z.string(), date: z.string() }, listing: { category: 'travel', tags: ['flights', 'airfare'] }, readOnly: true },
  { name: 'book_hotel', description: 'Books a hotel room in a city for given dates.', input: { city: z.string(), checkIn: z.string(), checkOut: z.string() }, listing: { category: 'travel', tags: ['hotel', 'booking'], priceMinor: '10000' }, readOnly: false },
  { name: 'create_calendar_event', description: 'Creates an event in a calendar with a title, start and end time.', input: { title: z.string(), start: z.string(), end: z.string() }, listing: { category: 'productivity', tags: ['calendar', 'meeting', 'schedule'] }, readOnly: false },
  { name: 'lookup_ip', description: 'Looks up the owner and location of an IP address.', input: { ip: z.string() }, listing: { category: 'network', tags: ['ip', 'whois'], freeCallsPerDay: 5 }, readOnly: true },
];

/** A tool whose input schema is large (about 30 KB): search_tools at `full` leaves it out; get_tool returns it. */
function bigSchemaInput(): Record<string, z.ZodTypeAny> {
  const shape: Record<string, z.ZodTypeAny> = {};
  for (let i = 0; i < 150; i++) shape[`field_${i}`] = z.string().optional().describe(`Optional setting number ${i} of the bulk import, described at length so the schema is large. `.repeat(2));
  return shape;
}

export function createCatalogDemoServer(): McpServer {
  const server = new McpServer({ name: 'catalog-demo', version: '1.0.0' }, { capabilities: { tools: {} } });
  const all = [...TOOLS, { name: 'bulk_import_records', description: 'Imports records in bulk with many optional settings.', input: bigSchemaInput(), listing: { category: 'data', tags: ['import', 'bulk'] }, readOnly: false }];
  for (const t of all) {
    server.registerTool(
      t.name,
      {
        description: t.description,
        inputSchema: z.object(t.input),
        annotations: { readOnlyHint: t.readOnly, openWorldHint: true },
        _meta: { 'tollgate/listing': t.listing },
      },
      async (args) => ({ content: [{ type: 'text', text: `${t.name} done: ${JSON.stringify(args)}` }] }),
    );
  }
  return server;
}
