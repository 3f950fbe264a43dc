-- Integrations reach git hosts: a kind, where the host is, encrypted credentials and a webhook secret.
ALTER TABLE integrations ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT 'git';
ALTER TABLE integrations ADD COLUMN base_url text;
ALTER TABLE integrations ADD COLUMN credentials_ciphertext text;
ALTER TABLE integrations ADD COLUMN webhook_secret_ciphertext text;

-- Push deliveries already handled, so a replayed one changes nothing.
CREATE TABLE webhook_deliveries (
  integration_id text COLLATE "C" NOT NULL,
  delivery_id    text COLLATE "C" NOT NULL,
  received_at    timestamptz NOT NULL,
  PRIMARY KEY (integration_id, delivery_id)
);
