"""Platform adapters: translation only (platform update -> IncomingMessage; replies -> SDK)."""
