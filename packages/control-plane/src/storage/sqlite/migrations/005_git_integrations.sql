-- Integrations reach git hosts: a kind, where the host is, encrypted credentials and a webhook secret.
ALTER TABLE integrations ADD COLUMN kind TEXT NOT NULL DEFAULT 'git';
ALTER TABLE integrations ADD COLUMN base_url TEXT;
ALTER TABLE integrations ADD COLUMN credentials_ciphertext TEXT;
ALTER TABLE integrations ADD COLUMN webhook_secret_ciphertext TEXT;

-- Push deliveries already handled, so a replayed one changes nothing.
CREATE TABLE webhook_deliveries (
  integration_id TEXT NOT NULL,
  delivery_id TEXT NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (integration_id, delivery_id)
);
