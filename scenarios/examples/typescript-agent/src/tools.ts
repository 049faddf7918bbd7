// The agent's one tool.
import { tool } from "@langchain/core/tools";
import { z } from "zod";

// A few forecasts, so the example needs no network; a real tool would call a weather service.
const forecasts: Record<string, string> = {
  paris: "sunny, 21 °C",
  london: "light rain, 14 °C",
  tokyo: "cloudy, 18 °C",
};

export const getWeather = tool(({ city }) => forecasts[city.trim().toLowerCase()] ?? `no forecast for ${city}`, {
  name: "get_weather",
  description: "Today's weather in a city.",
  schema: z.object({ city: z.string() }),
});
