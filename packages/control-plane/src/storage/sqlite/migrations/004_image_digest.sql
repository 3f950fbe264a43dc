-- The content id of the image a revision ran, recorded by container listeners.
ALTER TABLE revisions ADD COLUMN image_digest TEXT;
