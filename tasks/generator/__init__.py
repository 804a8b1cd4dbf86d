"""The task generator: world spec -> scenarios -> check catalog -> Harbor task folders."""
