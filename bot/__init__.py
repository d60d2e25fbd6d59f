"""The Telegram side of the GPU advisor: handlers, storage, inbox, webhook (docs/architecture.md)."""
