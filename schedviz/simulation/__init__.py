"""The engine with the controllers beside it, in virtual time: what ``manage.py simulate`` runs."""
