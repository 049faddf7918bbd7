"""The agent's one tool."""

from __future__ import annotations

from langchain_core.tools import tool

# A few forecasts, so the example needs no network; a real tool would call a weather service.
FORECASTS = {
    "paris": "sunny, 21 °C",
    "london": "light rain, 14 °C",
    "tokyo": "cloudy, 18 °C",
}


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return FORECASTS.get(city.strip().lower(), f"no forecast for {city}")
