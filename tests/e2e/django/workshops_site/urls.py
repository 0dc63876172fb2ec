from django.urls import path

from events import views

urlpatterns = [
    path("workshops/<int:workshop_id>/sign-up", views.sign_up, name="sign-up"),
]
