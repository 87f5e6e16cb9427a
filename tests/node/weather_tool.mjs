// The function tool the record-and-replay sessions call, in the Responses API's form.
export const WEATHER = {
  type: 'function',
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};
