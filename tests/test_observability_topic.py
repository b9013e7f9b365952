"""The notification topic: KMS-encrypted, TLS-only, publishable by CloudWatch and
EventBridge for this account, and who is subscribed; or an existing topic reused."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.constructs.observability.topic import (
    PUBLISHERS,
    NotificationTopic,
    NotificationTopicProps,
)
from tests.support import new_app

EXISTING = "arn:aws:sns:us-east-1:123456789012:platform-alerts"


def built(props: NotificationTopicProps) -> tuple[cdk.Stack, NotificationTopic, dict[str, Any]]:
    stack = cdk.Stack(new_app(), "Topics")
    topic = NotificationTopic(stack, "Notifications", props)
    return stack, topic, Template.from_stack(stack).to_json()["Resources"]


def of_type(resources: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in resources.values() if r["Type"] == kind]


@pytest.fixture(scope="module")
def created():
    return built(NotificationTopicProps(emails=("a@example.com", "b@example.com")))


def test_a_created_topic_is_encrypted_with_its_own_rotated_retained_key(created):
    stack, topic, resources = created
    [sns_topic] = of_type(resources, "AWS::SNS::Topic")
    [key] = of_type(resources, "AWS::KMS::Key")
    assert topic.key is not None
    assert sns_topic["Properties"]["KmsMasterKeyId"] == stack.resolve(topic.key.key_arn)
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == key["UpdateReplacePolicy"] == "Retain"
    # CloudWatch and EventBridge may use the key, else their messages are dropped.
    statements = key["Properties"]["KeyPolicy"]["Statement"]
    [services] = [s for s in statements if s.get("Sid") == "AlarmsAndEventsUseTheTopicKey"]
    assert sorted(services["Principal"]["Service"]) == sorted(PUBLISHERS)
    assert services["Action"] == ["kms:Decrypt", "kms:GenerateDataKey*"]
    # Only on behalf of this account's alarms and rules.
    assert services["Condition"] == {
        "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    }


def test_a_created_topic_accepts_tls_only_and_publishers_of_this_account(created):
    stack, topic, resources = created
    [policy] = of_type(resources, "AWS::SNS::TopicPolicy")
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    [tls] = [s for s in statements if s["Effect"] == "Deny"]
    assert tls["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert tls["Principal"] == "*"
    [publish] = [s for s in statements if s.get("Sid") == "AlarmsAndEventsPublish"]
    assert publish["Action"] == "sns:Publish"
    assert sorted(publish["Principal"]["Service"]) == sorted(PUBLISHERS)
    assert publish["Condition"] == {
        "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    }


def test_each_email_is_subscribed(created):
    stack, topic, resources = created
    subscriptions = of_type(resources, "AWS::SNS::Subscription")
    assert sorted(s["Properties"]["Endpoint"] for s in subscriptions) == [
        "a@example.com",
        "b@example.com",
    ]
    for subscription in subscriptions:
        assert subscription["Properties"]["Protocol"] == "email"
        assert subscription["Properties"]["TopicArn"] == stack.resolve(topic.topic_arn)


def test_an_existing_topic_is_reused_without_a_key_or_policy():
    stack, topic, resources = built(
        NotificationTopicProps(topic_arn=EXISTING, emails=("a@example.com",))
    )
    assert topic.key is None
    assert topic.topic_arn == EXISTING
    assert of_type(resources, "AWS::SNS::Topic") == []
    assert of_type(resources, "AWS::KMS::Key") == []
    assert of_type(resources, "AWS::SNS::TopicPolicy") == []
    [subscription] = of_type(resources, "AWS::SNS::Subscription")
    assert subscription["Properties"]["TopicArn"] == EXISTING


def test_a_topic_with_bad_options_is_refused_with_every_problem():
    with pytest.raises(ValueError) as error:
        built(NotificationTopicProps(emails=("nobody",), topic_arn="arn:aws:sqs:x"))
    message = str(error.value)
    assert "emails[0]='nobody': must be an email address" in message
    assert "topic_arn='arn:aws:sqs:x': must be a standard SNS topic ARN" in message
