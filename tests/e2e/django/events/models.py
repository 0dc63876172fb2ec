"""Workshops and their registrations, with Django's default table names
(events_workshop, events_registration). Nothing in the schema bounds a
workshop's registrations by its capacity: only the sign-up view does."""
from django.db import models


class Workshop(models.Model):
    title = models.CharField(max_length=200)
    capacity = models.PositiveIntegerField()


class Registration(models.Model):
    workshop = models.ForeignKey(Workshop, on_delete=models.CASCADE)
    email = models.CharField(max_length=254)
