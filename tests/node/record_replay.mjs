// One session with the official Node SDKs, printed as JSON: run by tests/e2e/test_record_replay_node.py
// once through the recording proxy and once against a server replaying the cassette; the two must match.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { WEATHER } from './weather_tool.mjs';

const openai = new OpenAI({ maxRetries: 0 });
const claude = new Anthropic({ maxRetries: 0 });
const MODEL = 'gpt-5.6-sol';
const messages = [{ role: 'user', content: 'Write a haiku about tide pools.' }];

const chunks = await openai.chat.completions.create({
  model: MODEL, messages, stream: true, stream_options: { include_usage: true }, max_tokens: 50,
});
let streamed = '';
let streamedUsage = null;
for await (const chunk of chunks) {
  streamed += chunk.choices[0]?.delta?.content ?? '';
  if (chunk.usage) streamedUsage = chunk.usage;
}
const whole = await openai.chat.completions.create({ model: MODEL, messages, max_tokens: 30 });

const first = await openai.responses.stream({ model: MODEL, input: 'Weather in Paris?', tools: [WEATHER], tool_choice: 'required' }).finalResponse();
const call = first.output.find((item) => item.type === 'function_call');
const second = await openai.responses.stream({
  model: MODEL, previous_response_id: first.id, tools: [WEATHER],
  input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp": 21}' }],
}).finalResponse();

const thought = await claude.messages.stream({
  model: 'claude-opus-4-8', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 },
  messages: [{ role: 'user', content: 'Why is the sea salty?' }],
}).finalMessage();

console.log(JSON.stringify({
  chat: { streamed, streamedUsage, whole: whole.choices[0].message.content, wholeUsage: whole.usage },
  responses: { call: [call.name, call.arguments, call.call_id], text: second.output_text, usage: second.usage },
  messages: { content: thought.content, usage: thought.usage },
}));
