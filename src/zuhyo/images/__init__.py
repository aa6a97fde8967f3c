"""Images: content-addressed store, URL materialisation, decode/resize/encode, perceptual hashing."""
