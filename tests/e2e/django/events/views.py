"""The sign-up view as it is often first written: count the seats taken,
take the payment, insert the registration. Each query commits on its own
(Django's autocommit) and nothing is locked, so sign-ups that count at the
same time all see a free seat and all insert: the workshop is overbooked."""
import time

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404

from .models import Registration, Workshop


def take_payment(email):
    """The payment provider's round trip."""
    time.sleep(settings.PAYMENT_DELAY_SECONDS)


def sign_up(request, workshop_id):
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    workshop = get_object_or_404(Workshop, pk=workshop_id)
    email = request.POST["email"]
    taken = Registration.objects.filter(workshop=workshop).count()
    if taken >= workshop.capacity:
        return HttpResponse("sold out\n", status=409)
    take_payment(email)
    Registration.objects.create(workshop=workshop, email=email)
    return HttpResponse("registered\n", status=201)
