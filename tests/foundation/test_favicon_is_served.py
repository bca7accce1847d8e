"""/favicon.ico (asked for by every browser) leads to the icon every page links to, instead of a 404."""

from django.templatetags.static import static


def test_favicon_ico_redirects_to_the_linked_icon(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == static("favicon.svg")
    login = client.get("/accounts/login/").content.decode()
    assert f'<link rel="icon" href="{static("favicon.svg")}"' in login
