// Writes the samples of the built-in scenario gemini-stream (google.ai.generativelanguage.v1.GenerativeService/
// StreamGenerateContent, a server-streaming RPC; schema vendored in proto/gemini/, see proto/gemini/SOURCE.md):
//
//   node scripts/gemini-samples.js proto/gemini/examples
//
// - requests.json: a JSON array of 8 GenerateContentRequest, each one user prompt;
// - responses.ndjson: one line per response stream, the same index as its request: a JSON array of the
//   GenerateContentResponse chunks the API streams back, each holding a few words of the answer; the last chunk also
//   carries the finish reason and the token counts.
// Both in the canonical proto3 JSON mapping (camelCase names, enums by name, fields at their default left out). The
// prompts and answers are written here by hand; the answers are cut into chunks by a fixed pattern of 3 to 8 words, and
// the token counts are estimated at one token per 4 characters (no tokenizer), so the output is the same on every run.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const MODEL = 'models/gemini-2.0-flash';
const MODEL_VERSION = 'gemini-2.0-flash';

/** @typedef {{prompt: string, config?: {maxOutputTokens?: number, temperature?: number}, answer: string}} Conversation */

/** @type {Conversation[]} the user's prompt, an optional generationConfig, and the model's answer */
const CONVERSATIONS = [
  {
    prompt: 'What is the difference between TCP and UDP, and when would I pick UDP?',
    answer: `TCP and UDP are both transport protocols that run on top of IP, but they make very different promises.

**TCP** (Transmission Control Protocol) is connection-oriented. It sets up a connection with a handshake, numbers every byte, retransmits anything that is lost, delivers data in order, and slows down when the network is congested. You get a reliable byte stream at the cost of extra round trips and head-of-line blocking: one lost packet holds up everything behind it.

**UDP** (User Datagram Protocol) is connectionless. It sends independent datagrams with no handshake, no retransmission and no ordering. A datagram either arrives whole or not at all, and the application decides what to do about losses.

Pick UDP when fresh data matters more than complete data, or when you want to build your own reliability:

- real-time voice and video calls
- online games sending position updates
- DNS lookups, where one small request and its reply each fit in a single datagram
- QUIC and HTTP/3, which implement their own reliability on top of UDP

For file transfers, web APIs and databases, TCP is usually the right default.`,
  },
  {
    prompt: `Summarise the following paragraph in two sentences:

Cities are often several degrees warmer than the surrounding countryside, an effect known as the urban heat island. Asphalt, concrete and dark roofs absorb sunlight during the day and release the heat slowly at night, while the lack of vegetation means less cooling through evaporation. Waste heat from cars, air conditioners and industry adds to the problem. The consequences include higher energy demand for cooling, worse air quality and more heat-related illness during heatwaves, particularly among elderly residents. Planners are responding with green roofs, street trees, reflective paving and more parks, which studies suggest can lower local temperatures by one to three degrees Celsius.`,
    answer: `Cities are warmer than the countryside around them because dark, hard surfaces store the sun's heat, there is little vegetation to cool the air, and vehicles, air conditioners and industry release waste heat. This urban heat island raises energy use and harms air quality and health during heatwaves, so planners are adding trees, parks, green roofs and reflective surfaces that can cool neighbourhoods by one to three degrees.`,
  },
  {
    prompt: `Why does this JavaScript print 3, 3, 3 instead of 0, 1, 2?

for (var i = 0; i < 3; i++) {
  setTimeout(() => console.log(i), 100);
}`,
    config: { maxOutputTokens: 1024, temperature: 0.2 },
    answer: `Because \`var\` is function-scoped, not block-scoped. The loop has only one variable \`i\`, shared by every iteration. The three arrow functions passed to \`setTimeout\` do not copy the value of \`i\` when they are created; they close over the variable itself. By the time the timers fire, 100 milliseconds later, the loop has long finished and \`i\` is 3, so each callback logs 3.

The simplest fix is to declare the loop variable with \`let\`:

\`\`\`js
for (let i = 0; i < 3; i++) {
  setTimeout(() => console.log(i), 100);
}
\`\`\`

With \`let\`, JavaScript creates a fresh binding of \`i\` for each iteration and copies the current value into it, so each callback sees its own \`i\` and the output is 0, 1, 2.

If you must stay with \`var\` (in very old code, for example), capture the value explicitly by passing it as an argument:

\`\`\`js
for (var i = 0; i < 3; i++) {
  setTimeout((n) => console.log(n), 100, i);
}
\`\`\`

\`setTimeout\` forwards its extra arguments to the callback, so \`n\` is fixed at the moment the timer is scheduled. An immediately invoked function expression works the same way, but \`let\` is clearer and is what most linters will suggest.`,
  },
  {
    prompt: 'Translate into French: "The museum is closed on Mondays. Tickets can be bought online or at the entrance, and children under twelve get in free."',
    answer: `Here is the translation:

« Le musée est fermé le lundi. Les billets peuvent être achetés en ligne ou à l'entrée, et l'entrée est gratuite pour les enfants de moins de douze ans. »

Note: « le lundi », with the article, means every Monday; « lundi » on its own would mean only the coming Monday.`,
  },
  {
    prompt: "I have three days in Lisbon in early May. Can you suggest an itinerary? I like food, views and history, and I don't want to rush.",
    config: { temperature: 0.9 },
    answer: `Here is a relaxed three-day plan that mixes food, viewpoints and history, with time to wander.

**Day 1: Baixa, Chiado and Alfama**
- Morning: start at Praça do Comércio, walk up Rua Augusta through the Baixa, and have a coffee and a pastel de nata at a café in Chiado.
- Midday: take the historic tram 28 or walk up to the Castelo de São Jorge. Go early to avoid the longest queues.
- Afternoon: get lost in the lanes of Alfama, and stop at the Miradouro de Santa Luzia and the Miradouro da Graça for views over the river.
- Evening: dinner in Alfama, ideally somewhere with live fado. Book ahead on weekends.

**Day 2: Belém**
- Morning: take the tram or a train along the river to Belém. Visit the Jerónimos Monastery when it opens, then the Tower of Belém.
- Midday: buy pastéis de Belém at the original bakery and eat them in the gardens nearby.
- Afternoon: the MAAT museum or the Monument to the Discoveries, then a slow walk back along the waterfront.
- Evening: the Time Out Market at Cais do Sodré is convenient for trying many dishes in one place, though it gets busy.

**Day 3: Príncipe Real and Bairro Alto, or a day trip**
- Option A: stay in the city. Browse the shops and gardens of Príncipe Real, watch the sunset from the Miradouro de São Pedro de Alcântara, and have petiscos in the Bairro Alto.
- Option B: take the train from Rossio to Sintra (about 40 minutes) for the Pena Palace and the Moorish Castle. Buy timed tickets online and wear comfortable shoes; the paths are steep.

A few tips:
- Early May is usually mild, around 20 °C, but bring a light jacket for the evenings.
- Lisbon is hilly and paved with slippery stone, so good shoes matter more than anything else.

Enjoy the trip, and leave room for long lunches.`,
  },
  {
    prompt: 'Can you draft a short, polite email declining a meeting invitation for Thursday because I have a deadline? Offer to catch up next week instead.',
    config: { maxOutputTokens: 512, temperature: 0.7 },
    answer: `Subject: Re: Meeting on Thursday

Hi Sam,

Thank you for the invitation to Thursday's meeting. Unfortunately I won't be able to attend, as I'm working to a deadline that day and need to keep the afternoon clear.

I'd still like to hear how the discussion goes. Would you be free for a short catch-up early next week? Tuesday or Wednesday morning would suit me, but I'm happy to fit around your schedule. If there is anything you need from me before Thursday, just let me know and I'll send it over in advance.

Thanks for understanding, and apologies for the short notice.

Best regards,
Alex`,
  },
  {
    prompt: 'How do I convert Celsius to Fahrenheit? What is 37 °C in Fahrenheit?',
    answer: `To convert Celsius to Fahrenheit, multiply by 9/5 (or 1.8) and then add 32:

°F = °C × 9/5 + 32

For 37 °C:

37 × 1.8 = 66.6
66.6 + 32 = 98.6

So 37 °C is 98.6 °F, the traditional value for normal human body temperature. To go the other way, subtract 32 and multiply by 5/9. A quick mental shortcut is to double the Celsius value and add 30, which is close enough for the weather.`,
  },
  {
    prompt: 'Write a SQL query that returns the top 5 customers by total order value in 2024. Tables: customers(id, name, email) and orders(id, customer_id, total, created_at).',
    config: { maxOutputTokens: 2048, temperature: 0.1 },
    answer: `Here is a query that works in PostgreSQL, MySQL and SQLite:

\`\`\`sql
SELECT c.id,
       c.name,
       c.email,
       SUM(o.total) AS total_2024,
       COUNT(*) AS order_count
FROM customers AS c
JOIN orders AS o ON o.customer_id = c.id
WHERE o.created_at >= '2024-01-01'
  AND o.created_at < '2025-01-01'
GROUP BY c.id, c.name, c.email
ORDER BY total_2024 DESC
LIMIT 5;
\`\`\`

How it works:

1. The \`JOIN\` pairs each order with the customer who placed it. Customers with no orders drop out, which is what you want for a top list.
2. The \`WHERE\` clause keeps only orders from 2024. A half-open range (\`>=\` the first of January, \`<\` the next first of January) is safer than \`YEAR(created_at) = 2024\`: it includes the whole last day even when \`created_at\` has a time part, and it lets the database use an index on \`created_at\`.
3. \`GROUP BY\` collapses the orders to one row per customer, and \`SUM(o.total)\` adds up their value.
4. \`ORDER BY total_2024 DESC LIMIT 5\` keeps the five largest.

Two things to watch:

- Ties: if the fifth and sixth customers have the same total, \`LIMIT 5\` picks one of them arbitrarily. Add \`c.id\` as a second sort key for a stable result, or use \`RANK()\` in a window function to include everyone tied for fifth place.
- Status: if the table also holds cancelled or refunded orders, filter them out in the \`WHERE\` clause, for example with \`AND o.status = 'paid'\`.

On SQL Server, replace \`LIMIT 5\` with \`SELECT TOP 5\` at the start of the query.`,
  },
];

/** Words per chunk, cycled (each stream starts at its own offset): 3 to 8, about 5.5 on average. */
const CHUNK_WORDS = [3, 6, 4, 8, 5, 7, 3, 5, 6, 4, 8, 7];

/** Cuts text into chunks of whole words, each word keeping the whitespace before it, so the chunks join back to the text. */
function chunksOf(text, offset) {
  const words = text.match(/\s*\S+/g);
  const chunks = [];
  for (let at = 0, k = offset; at < words.length; k++) {
    const n = CHUNK_WORDS[k % CHUNK_WORDS.length];
    chunks.push(words.slice(at, at + n).join(''));
    at += n;
  }
  return chunks;
}

/** A token count estimate: one token per 4 characters. */
const tokens = (text) => Math.ceil(text.length / 4);

/** @param {Conversation} conversation */
const request = ({ prompt, config }) => ({
  model: MODEL,
  contents: [{ parts: [{ text: prompt }], role: 'user' }],
  ...(config && { generationConfig: config }),
});

/** The response stream of a conversation, the i-th: its chunks. @param {Conversation} conversation @param {number} i */
function stream({ prompt, answer }, i) {
  const chunks = chunksOf(answer, i);
  return chunks.map((text, k) => {
    const candidate = { content: { parts: [{ text }], role: 'model' } };
    if (k < chunks.length - 1) return { candidates: [candidate], modelVersion: MODEL_VERSION };
    const [promptTokens, answerTokens] = [tokens(prompt), tokens(answer)];
    return {
      candidates: [{ ...candidate, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: promptTokens, candidatesTokenCount: answerTokens, totalTokenCount: promptTokens + answerTokens },
      modelVersion: MODEL_VERSION,
    };
  });
}

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/gemini-samples.js <out-dir>   (e.g. proto/gemini/examples)');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'requests.json'), `${JSON.stringify(CONVERSATIONS.map(request), null, 2)}\n`);
writeFileSync(path.join(out, 'responses.ndjson'), CONVERSATIONS.map((c, i) => `${JSON.stringify(stream(c, i))}\n`).join(''));
console.log(`wrote ${CONVERSATIONS.length} requests and response streams to ${out}`);
